"""Export: the files a writer bundles (`files.collect`) and the check that a downloaded
archive holds exactly them (`verify.verify`). `toolkit.commands.export` does the rest
through the archive-task API."""
