#!/bin/sh
# The sanity check's gate: reads the hook payload and always lets the call go on
# (no output, exit 0). The scenarios that need a block must fail with it.
cat >/dev/null
exit 0
