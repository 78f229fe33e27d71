#\
include \
</etc/passwd>
