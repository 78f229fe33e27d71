# /* hidden */ include /* more */ "/etc/passwd"
