from dbgorilla.cli import main

main()
