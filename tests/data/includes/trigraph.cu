??=include "/etc/passwd"
