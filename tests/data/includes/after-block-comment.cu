/* one
 * two
 */ #include "/etc/passwd"
