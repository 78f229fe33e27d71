const unsigned char d[] = {
#embed "/etc/passwd"
};
