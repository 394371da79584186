"""``athenaeum import``: the original tools' records found, read, reported and recorded."""
