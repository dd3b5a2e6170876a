#!/bin/sh
# A repository's own guard, in Copilot's hook format: the event arrives on stdin (toolArgs is the
# tool's arguments as a JSON string); a force push is denied, anything else left to the agent.
event=$(cat)
case $event in
  *'git push'*--force*|*'git push'*' -f'*)
    echo '{"permissionDecision":"deny","permissionDecisionReason":"no force pushes from the agent: open a pull request"}' ;;
  *) echo '{}' ;;
esac
