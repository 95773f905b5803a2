#!/usr/bin/env bash
# Manual deploy, for when the webhook is down or you need to deploy from a shell.
# Usage: scripts/deploy.sh [ref]   (default: origin/main)
set -euo pipefail

REF="${1:-origin/${DEPLOY_BRANCH:-main}}"
DIR="${DEPLOY_DIR:-/srv/slackzilla}"
SERVICE="${SERVICE_NAME:-slackzilla}"

cd "$DIR"
previous="$(git rev-parse HEAD)"
echo "current commit: $previous"

git fetch --prune origin
git checkout --detach "$REF"
npm ci --omit=dev --no-audit --no-fund

sudo -n systemctl restart "$SERVICE.service"
sleep 3
if ! curl -fsS "http://127.0.0.1:${PORT:-3000}/healthz" >/dev/null; then
  echo "health check failed; rolling back to $previous" >&2
  git checkout --detach "$previous"
  npm ci --omit=dev --no-audit --no-fund
  sudo -n systemctl restart "$SERVICE.service"
  exit 1
fi
echo "deployed $(git rev-parse --short HEAD)"
