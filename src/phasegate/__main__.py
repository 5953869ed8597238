from phasegate.cli import entry

entry()
