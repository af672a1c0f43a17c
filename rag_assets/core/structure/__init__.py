"""The structure of a document: the tree of units (tree) and its tables read as rows (tables)."""
