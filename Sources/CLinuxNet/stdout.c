// See include/clinuxnet.h: roomtap_flush_stdout.
#include "clinuxnet.h"

#include <errno.h>
#include <stdio.h>

int roomtap_flush_stdout(void) {
    errno = 0;
    int failed = fflush(stdout) != 0;
    int saved = errno;
    if (!failed && !ferror(stdout)) return 0;
    return failed && saved != 0 ? saved : -1;
}
