# Sourced by the scripts: Python keeps the bytecode it compiles, outside the checkout.
# A shell that sets PYTHONDONTWRITEBYTECODE makes every process (each pytest worker, each
# service a test starts) compile every module it imports again, the service's and its
# libraries' alike; PYTHONPYCACHEPREFIX keeps the cache out of the checkout.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/ten/pycache}"
