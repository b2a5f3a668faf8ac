from meshcert.cli import main

main()
