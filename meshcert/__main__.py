from meshcert.cli import main

# guarded: a spawned worker process (meshcert serve's certification pool) imports this module
# as __mp_main__ and must not run the command line again
if __name__ == "__main__":
    main()
