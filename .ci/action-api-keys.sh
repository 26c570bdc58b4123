# Sourced by the steps of action.yml that ask the API: a team's keys (the action's input
# api-keys, in INPUT_API_KEYS), one VARIABLE=value line per writer, each exported in the
# variable toolkit.toml's [writers] names; `keys` is how many were given a value. A line
# that is not VARIABLE=value, or names a variable the runner, the shell or toolkit itself
# reads, fails the step.
keys=0
while IFS= read -r line || [ -n "$line" ]; do
  [ -n "${line//[[:space:]]/}" ] || continue
  name="${line%%=*}"
  case "$name" in
    PATH|HOME|IFS|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|FOREM_API_KEY|FOREM_BASE_URL|LD_*|PYTHON*|GIT_*|GITHUB_*|RUNNER_*|TOOLKIT_*|INPUT_*) name="" ;;
  esac
  if [[ "$line" != *=* || ! "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
    echo "::error::toolkit action: each line of api-keys is a writer's VARIABLE=value"
    exit 1
  fi
  if [ -n "${line#*=}" ]; then
    export "$name=${line#*=}"
    keys=$((keys + 1))
  fi
done <<< "$INPUT_API_KEYS"
unset INPUT_API_KEYS line name
