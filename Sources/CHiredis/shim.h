// libhiredis (Debian libhiredis-dev 0.14: RESP2, blocking contexts). roomtap calls only the
// argv form (redisCommandArgv), never the printf-like redisCommand.
#include <hiredis/hiredis.h>
