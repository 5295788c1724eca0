// Package deploy holds deployment files: the scripts behind `make run` and
// `make test` (local/), the Prometheus configuration, the Grafana provisioning
// and dashboard, and tests that check docker-compose.yml, the Dockerfile and
// these files against each other and against the settings tocsin reads.
package deploy
