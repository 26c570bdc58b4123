"""Export: the files a writer bundles (`files.collect`), the job that sends them to the
archive-task API and brings the archive back (`job.export_archive`), and the check that
a downloaded archive holds exactly them (`verify.verify`)."""
