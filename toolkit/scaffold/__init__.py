"""`toolkit init`'s domain: the posts already in a folder (`adopt`), the files of a new
project (`files`), and writing them, never over a file that exists (`project`)."""
