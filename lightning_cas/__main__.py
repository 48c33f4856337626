from lightning_cas.cli import main

main()
