"""The command line: argv -> options -> engine -> renderer -> stream -> exit status."""
