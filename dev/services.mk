# Local dev services (Kafka KRaft + PostgreSQL, no Docker). Included by the main Makefile.
# See dev/README.md. Ports and locations come from ENGRAM_DEV_* environment variables.

ENGRAM_DEV_DIR := $(CURDIR)/dev

.PHONY: services-up services-down services-status kafka-up kafka-down postgres-up postgres-down

services-up:
	bash $(ENGRAM_DEV_DIR)/services.sh up

services-down:
	bash $(ENGRAM_DEV_DIR)/services.sh down

services-status:
	bash $(ENGRAM_DEV_DIR)/services.sh status

kafka-up:
	bash $(ENGRAM_DEV_DIR)/kafka.sh up

kafka-down:
	bash $(ENGRAM_DEV_DIR)/kafka.sh down

postgres-up:
	bash $(ENGRAM_DEV_DIR)/postgres.sh up

postgres-down:
	bash $(ENGRAM_DEV_DIR)/postgres.sh down
