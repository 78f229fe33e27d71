#import "/etc/passwd"
