# bash completion for vault-run
_vault_run() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local subcommands="mount policy audit scan profiles doctor config proxy run"
	local options="--project --mount-at --profile --net --env-allow --setenv --unsetenv --clearenv
		--env-file --hide --readonly --redact --show --policy --audit --audit-level --timeout
		--json-status-fd --allow-userns --dry-run --quiet -v --help --version --ro-bind --bind
		--ro-bind-try --bind-try --dev-bind --tmpfs --dir --symlink --proc --dev --chdir
		--hostname --unshare-net --share-net --new-session --die-with-parent --rootfs"
	case $prev in
	--project|--rootfs|--chdir|--policy|--env-file|--audit) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--profile) COMPREPLY=($(compgen -W "none $(vault-run profiles 2>/dev/null | cut -d' ' -f1)" -- "$cur")); return ;;
	--net) COMPREPLY=($(compgen -W "none host allow= allow-private" -- "$cur")); return ;;
	--audit-level) COMPREPLY=($(compgen -W "denied writes reads opens all" -- "$cur")); return ;;
	policy) COMPREPLY=($(compgen -W "explain show" -- "$cur")); return ;;
	config) COMPREPLY=($(compgen -W "init show" -- "$cur")); return ;;
	esac
	# After "--" or a command word, complete commands and files.
	local i
	for ((i = 1; i < COMP_CWORD; i++)); do
		[ "${COMP_WORDS[i]}" = -- ] && { COMPREPLY=($(compgen -c -- "$cur")); return; }
	done
	if [ "$COMP_CWORD" = 1 ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -W "$subcommands" -- "$cur") $(compgen -c -- "$cur"))
	else
		COMPREPLY=($(compgen -W "$options" -- "$cur"))
	fi
}
complete -F _vault_run vault-run
