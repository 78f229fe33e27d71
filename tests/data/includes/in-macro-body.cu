#define X # include "/etc/passwd"
