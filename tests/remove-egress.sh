#!/usr/bin/env bash
# remove-egress.sh INSTANCE_ID: removes the egress network a test service of that instance
# made (found by its label) and the firewall chains named after it, with their jumps. The
# service leaves both in place when it is killed; its sandboxes must be removed first.
set -uo pipefail
instance=${1:?usage: remove-egress.sh INSTANCE_ID}
for network in $(docker network ls --filter "label=org.sandboxd.egress=$instance" --format '{{.Name}}'); do
    chain="SBXE-${network#sandboxd-egress-}"
    for table in nat filter; do
        # Each jump to one of the chains, as `-D` of the rule `-S` prints (one word per field).
        iptables -w -t "$table" -S | awk -v c="$chain" '$1 == "-A" && $0 ~ "-j " c "(-|$)"' |
            while read -r _ rule; do
                # shellcheck disable=SC2086 # the rule's words
                iptables -w -t "$table" -D $rule
            done
        for own in $(iptables -w -t "$table" -S | awk -v c="$chain" '$1 == "-N" && index($2, c) == 1 { print $2 }'); do
            iptables -w -t "$table" -F "$own" && iptables -w -t "$table" -X "$own"
        done
    done
    docker network rm "$network" >/dev/null
done
