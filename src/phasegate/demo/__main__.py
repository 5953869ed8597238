import sys

from phasegate.demo import main

sys.exit(main())
