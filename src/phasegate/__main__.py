from phasegate.entry import main

main()
