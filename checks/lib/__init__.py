"""What every check module shares (base.py). Each check module puts checks/ on sys.path by
appending, never inserting: ReFrame loads a check file with its folder appended to sys.path
and then pops that position, which an insert at 0 would shift onto another entry."""
