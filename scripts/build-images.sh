#!/usr/bin/env bash
# Build the local sandbox images without any image registry:
#
#   sandboxd/busybox:local         busybox-static + applet symlinks (~1 s)
#   sandboxd/python:3.11-bookworm  debootstrap minbase bookworm + python3, pip, venv (~40-70 s)
#
# Usage: scripts/build-images.sh [busybox|python|all]... [--force]
#
# Idempotent: an image built by the current version of its recipe (label
# org.sandboxd.recipe-version) is skipped unless --force.
# Every image is labelled org.sandboxd.local-image=true and
# org.sandboxd.base-image=<name>, and has a "sandbox" user/group with uid/gid
# 61000 besides root.
#
# Environment:
#   SANDBOXD_DEBIAN_MIRROR  Debian mirror for debootstrap (default: the one apt
#                           uses on this host, else http://deb.debian.org/debian)
#   TMPDIR                  where rootfs trees are assembled (default /var/tmp)
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
    exit "${1:-2}"
}

FORCE=0
TARGETS=()
for arg in "$@"; do
    case "$arg" in
        --force | -f) FORCE=1 ;;
        busybox | python) TARGETS+=("$arg") ;;
        all) TARGETS+=(busybox python) ;;
        -h | --help) usage 0 ;;
        *)
            log "unknown argument: $arg"
            usage 2
            ;;
    esac
done
[[ ${#TARGETS[@]} -gt 0 ]] || TARGETS=(busybox python)

require_docker

WORK_PARENT="${TMPDIR:-/var/tmp}"
WORKDIR=""
cleanup_workdir() {
    [[ -n "$WORKDIR" && -d "$WORKDIR" ]] || return 0
    # debootstrap mounts proc/sys (and possibly binds /dev) inside the target;
    # unmount anything below WORKDIR before deleting, and never cross into
    # another filesystem while deleting.
    local m
    while read -r m; do
        umount -l "$m" 2>/dev/null || warn "could not unmount $m"
    done < <(awk -v d="$WORKDIR/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r)
    rm -rf --one-file-system "$WORKDIR" || warn "could not remove $WORKDIR"
    WORKDIR=""
}
trap cleanup_workdir EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

new_workdir() {
    cleanup_workdir
    WORKDIR="$(mktemp -d "$WORK_PARENT/sandboxd-image.XXXXXX")"
    mkdir "$WORKDIR/rootfs"
    # mktemp -d makes 0700 directories; the image root must be 0755.
    chmod 0755 "$WORKDIR/rootfs"
}

# What each recipe builds; an image labelled with an older version is rebuilt.
declare -A RECIPE_VERSION=([busybox]=1 [python]=2)

# image_current IMAGE RECIPE: the image exists and was built by this version of the recipe.
image_current() {
    [[ "$(docker image inspect --format '{{index .Config.Labels "org.sandboxd.recipe-version"}}' "$1" 2>/dev/null)" == "${RECIPE_VERSION[$2]}" ]]
}
image_id() { docker image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }

# import_rootfs DIR IMAGE RECIPE [--change ...]: tar DIR into IMAGE.
import_rootfs() {
    local dir=$1 image=$2 recipe=$3 old new
    shift 3
    old="$(image_id "$image")"
    tar --numeric-owner -C "$dir" -cf - . |
        docker import \
            --change "LABEL org.sandboxd.local-image=true" \
            --change "LABEL org.sandboxd.base-image=$recipe" \
            --change "LABEL org.sandboxd.recipe-version=${RECIPE_VERSION[$recipe]}" \
            "$@" \
            --message "sandboxd/scripts/build-images.sh $recipe" \
            - "$image" >/dev/null
    new="$(image_id "$image")"
    # With --force the previous image becomes untagged: drop it if unused.
    if [[ -n "$old" && "$old" != "$new" ]]; then
        docker rmi "$old" >/dev/null 2>&1 || true
    fi
}

# write_users ROOTFS: make sure root and the sandbox user/group exist.
write_users() {
    local r=$1 uid=$SANDBOXD_SANDBOX_UID gid=$SANDBOXD_SANDBOX_GID
    mkdir -p "$r/etc" "$r/root" "$r/home/sandbox"
    [[ -f "$r/etc/passwd" ]] || printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
    [[ -f "$r/etc/group" ]] || printf 'root:x:0:\n' >"$r/etc/group"
    grep -q '^sandbox:' "$r/etc/passwd" ||
        printf 'sandbox:x:%s:%s:sandbox:/home/sandbox:/bin/sh\n' "$uid" "$gid" >>"$r/etc/passwd"
    grep -q '^sandbox:' "$r/etc/group" ||
        printf 'sandbox:x:%s:\n' "$gid" >>"$r/etc/group"
    if [[ -f "$r/etc/shadow" ]] && ! grep -q '^sandbox:' "$r/etc/shadow"; then
        printf 'sandbox:!:%s:0:99999:7:::\n' "$(($(date +%s) / 86400))" >>"$r/etc/shadow"
    fi
    if [[ -f "$r/etc/gshadow" ]] && ! grep -q '^sandbox:' "$r/etc/gshadow"; then
        printf 'sandbox:!::\n' >>"$r/etc/gshadow"
    fi
    chmod 0700 "$r/root"
    chown "$uid:$gid" "$r/home/sandbox"
    chmod 0755 "$r/home/sandbox"
}

# --- sandboxd/busybox:local --------------------------------------------------

build_busybox() {
    local bb=/bin/busybox r applet
    if ! is_static_binary "$bb"; then
        die "$bb is missing or not static: install busybox-static (scripts/host-setup.sh)"
    fi
    new_workdir
    r="$WORKDIR/rootfs"

    mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" "$r/tmp" "$r/workspace" \
        "$r/proc" "$r/sys" "$r/dev" "$r/var/tmp"
    chmod 1777 "$r/tmp" "$r/var/tmp"
    install -m 0755 "$bb" "$r/bin/busybox"
    while read -r applet; do
        # The list contains busybox itself (would overwrite the binary with a
        # symlink to itself) and /linuxrc (not wanted in a container).
        case "$applet" in
            "" | bin/busybox | linuxrc) continue ;;
        esac
        mkdir -p "$r/$(dirname "$applet")"
        ln -sf /bin/busybox "$r/$applet"
    done < <("$bb" --list-full)
    [[ -x "$r/bin/sh" ]] || die "busybox has no sh applet?"

    printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:%s:%s:sandbox:/home/sandbox:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
        "$SANDBOXD_SANDBOX_UID" "$SANDBOXD_SANDBOX_GID" >"$r/etc/passwd"
    printf 'root:x:0:\nsandbox:x:%s:\nnogroup:x:65534:\n' "$SANDBOXD_SANDBOX_GID" >"$r/etc/group"
    write_users "$r"
    # Docker copies the mode/owner of an image directory into a tmpfs mounted
    # over it (tmpcopyup), so make /workspace look like the tmpfs we want.
    chown "$SANDBOXD_SANDBOX_UID:$SANDBOXD_SANDBOX_GID" "$r/workspace"
    chmod 0700 "$r/workspace"

    import_rootfs "$r" "$SANDBOXD_BUSYBOX_IMAGE" busybox \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["sh"]'
    cleanup_workdir
}

# --- sandboxd/python:3.11-bookworm -------------------------------------------

# Print the first http(s) Debian mirror apt uses for a plain "bookworm" suite
# (one-line *.list or deb822 *.sources), if any.
apt_debian_mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f "$f" ]] || continue
        # deb [options] URI suite components...
        awk '$1 == "deb" {
                 i = 2
                 if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                 if ($(i + 1) == "bookworm" && $i ~ /^https?:\/\//) { print $i; exit }
             }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f "$f" ]] || continue
        # deb822 stanzas separated by blank lines; fields are case-insensitive.
        awk 'function flush() {
                 if (types ~ /(^| )deb( |$)/ && suites ~ /(^| )bookworm( |$)/ && enabled !~ /^no$/)
                     for (k = 1; k <= n; k++) if (u[k] ~ /^https?:\/\//) { print u[k]; found = 1; exit }
                 types = suites = enabled = ""; n = 0
             }
             /^[ \t]*#/ { next }
             /^[ \t]*$/ { flush(); next }
             {
                 key = tolower($1); sub(/:$/, "", key)
                 val = $0; sub(/^[^:]*:[ \t]*/, "", val)
                 if (key == "types") types = val
                 else if (key == "suites") suites = val
                 else if (key == "enabled") enabled = tolower(val)
                 else if (key == "uris") n = split(val, u, /[ \t]+/)
             }
             END { if (!found) flush() }' "$f"
    done
}

debian_mirror() {
    if [[ -n "${SANDBOXD_DEBIAN_MIRROR:-}" ]]; then
        printf '%s\n' "$SANDBOXD_DEBIAN_MIRROR"
        return
    fi
    local m
    m="$(apt_debian_mirror | head -n 1)"
    printf '%s\n' "${m:-http://deb.debian.org/debian}"
}

build_python() {
    have debootstrap || die "debootstrap not found: run scripts/host-setup.sh"
    local mirror r dlog keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    # shellcheck disable=SC2054 # commas belong to --include
    local args=(--variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates --components=main)
    mirror="$(debian_mirror)"
    [[ -f "$keyring" ]] && args+=("--keyring=$keyring")

    # debootstrap downloads with wget: hand it apt's proxy if apt has one and
    # the environment has none.
    if have apt-config && [[ -z "${http_proxy:-}${https_proxy:-}" ]]; then
        local APT_HTTP_PROXY="" APT_HTTPS_PROXY=""
        eval "$(apt-config shell APT_HTTP_PROXY Acquire::http::Proxy APT_HTTPS_PROXY Acquire::https::Proxy)"
        [[ -n "$APT_HTTP_PROXY" && "$APT_HTTP_PROXY" != DIRECT ]] && export http_proxy="$APT_HTTP_PROXY"
        [[ -n "$APT_HTTPS_PROXY" && "$APT_HTTPS_PROXY" != DIRECT ]] && export https_proxy="$APT_HTTPS_PROXY"
    fi
    if [[ "$mirror" == https://* && ! -s /etc/ssl/certs/ca-certificates.crt ]]; then
        die "mirror $mirror is https but /etc/ssl/certs/ca-certificates.crt is missing (install ca-certificates)"
    fi

    new_workdir
    r="$WORKDIR/rootfs"
    dlog="$WORKDIR/debootstrap.log"
    log "debootstrap bookworm from $mirror (log tail shown on failure)"
    if ! debootstrap "${args[@]}" bookworm "$r" "$mirror" >"$dlog" 2>&1; then
        log "debootstrap failed; last lines of its log:"
        tail -n 40 "$dlog" >&2 || true
        [[ -f "$r/debootstrap/debootstrap.log" ]] && tail -n 40 "$r/debootstrap/debootstrap.log" >&2
        die "debootstrap bookworm from $mirror failed"
    fi
    [[ -x "$r/usr/bin/python3" ]] || die "debootstrap finished but the rootfs has no /usr/bin/python3"

    write_users "$r"
    mkdir -p "$r/workspace"
    # Docker copies the mode/owner of an image directory into a tmpfs mounted
    # over it (tmpcopyup), so make /workspace look like the tmpfs we want.
    chown "$SANDBOXD_SANDBOX_UID:$SANDBOXD_SANDBOX_GID" "$r/workspace"
    chmod 0700 "$r/workspace"

    # Shrink: no apt caches/lists, no man/info pages, no logs. Host files that
    # debootstrap copied in (resolv.conf, hostname) are the engine's business.
    rm -rf "$r"/var/cache/apt/*.bin "$r"/var/cache/apt/archives/*.deb \
        "$r"/var/cache/apt/archives/partial/* "$r"/var/lib/apt/lists/* \
        "$r"/var/cache/debconf/*-old "$r"/var/lib/dpkg/*-old \
        "$r"/usr/share/man/* "$r"/usr/share/info/* \
        "$r"/var/log/*.log "$r"/var/log/apt/* "$r"/debootstrap \
        "$r"/etc/resolv.conf "$r"/etc/hostname
    if ! mountpoint -q "$r/dev"; then
        find "$r/dev" -xdev -mindepth 1 -delete 2>/dev/null || true
    fi
    printf 'sandbox\n' >"$r/etc/hostname"

    import_rootfs "$r" "$SANDBOXD_PYTHON_IMAGE" python \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["python3"]'
    cleanup_workdir
}

# --- main --------------------------------------------------------------------

declare -A done_targets=()
for t in "${TARGETS[@]}"; do
    [[ -z "${done_targets[$t]:-}" ]] || continue
    done_targets[$t]=1
    case "$t" in
        busybox) image=$SANDBOXD_BUSYBOX_IMAGE ;;
        python) image=$SANDBOXD_PYTHON_IMAGE ;;
    esac
    if [[ $FORCE -eq 0 ]] && image_current "$image" "$t"; then
        log "$image is current (use --force to rebuild)"
        continue
    fi
    log "building $image"
    start="$(now)"
    "build_$t"
    log "built $image in $(elapsed_since "$start") ($(docker image inspect --format '{{.Size}}' "$image" | awk '{ printf "%.1f MB", $1 / 1e6 }'))"
done
