# Lets the tests import the package from the project root.
