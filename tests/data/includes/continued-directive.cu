int a;
#inc\
lude "/etc/passwd"
