# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# bash completion for tftracer (installed as .../bash-completion/completions/tftracer).
#
# Nothing here names a command or an option: both are read from the installed
# binary's own help, so a new subcommand or option completes without a change
# here. `tftracer --help` lists the commands (the lines under "commands:");
# `tftracer CMD --help` lists the options (the indented lines that start with
# -x, or --name); an option followed by a word in capitals takes a value: the
# values that its help line or the usage line names (`--by name|category|track`,
# or the indented list under "one of:") are offered, else file names. After
# `record ... --` the program and its arguments are completed as commands are.

_tftracer_commands() {
	"$1" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ && n++ { exit }'
}

# the options of one command, one a line: "NAMES VALUE-WORD", NAMES the short and
# long forms joined by a comma (-f,--format), VALUE-WORD empty for a flag
_tftracer_options() {
	"$1" "$2" --help 2>/dev/null | sed -nE \
		-e 's/^ {1,8}(-[A-Za-z0-9]), (--[a-z][a-z0-9-]*)( ([A-Z][A-Za-z_]*))?( .*)?$/\1,\2 \4/p' \
		-e 's/^ {1,8}(--?[A-Za-z0-9][a-z0-9-]*)( ([A-Z][A-Za-z_]*))?( .*)?$/\1 \3/p'
}

# the values an option's help names: "--opt a|b|c" in the usage lines, or the
# words listed under "one of:" at the end of the option's own line (NAMES as above)
_tftracer_values() {
	"$1" "$2" --help 2>/dev/null | awk -v names="$3" '
		BEGIN { n = split(names, name, ",") }
		function is_opt(w,  k) { for (k = 1; k <= n; k++) if (w == name[k]) return 1; return 0 }
		/^(usage:| +tftracer )/ {
			for (i = 1; i < NF; i++) {
				w = $i; gsub(/^\[/, "", w)
				if (is_opt(w) && $(i + 1) ~ /\|/ && $(i + 1) !~ /^-/) {
					v = $(i + 1); gsub(/[][]/, "", v); m = split(v, a, "|")
					for (j = 1; j <= m; j++) print a[j]
					found = 1
				}
			}
			next
		}
		found { exit }
		/one of:/ { for (k = 1; k <= n; k++) if (index($0, " " name[k] " ") || index($0, " " name[k] ",")) list = 1; next }
		list && /^          +[a-z][a-z0-9_-]*( |$)/ { print $1; next }
		list { exit }'
}

# a value word that names a file (FILE, OUT, F, INPUT, DIR ...); others (N, PORT,
# ADDR, T, KEY, MB ...) complete to nothing
_tftracer_is_file_word() {
	case $1 in FILE | OUT | F | INPUT | DIR | PATH | SESSION) return 0 ;; esac
	return 1
}

_tftracer() {
	local cur prev bin cmd i words_cmd=0 opts name val
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	bin=${COMP_WORDS[0]}
	# the subcommand: the first word after the binary
	if [ "$COMP_CWORD" -eq 1 ]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_tftracer_commands "$bin") --help --version" -- "$cur")
		# `tftracer FILE...` serves files: offer them too
		compopt -o filenames 2>/dev/null
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	# record: after "--" the rest is a command line
	if [ "$cmd" = record ]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = "--" ]; then
				words_cmd=$((i + 1))
				break
			fi
		done
		if [ "$words_cmd" -gt 0 ]; then
			if declare -F _command_offset >/dev/null; then
				_command_offset "$words_cmd"
			elif [ "$COMP_CWORD" -eq "$words_cmd" ]; then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			else
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			fi
			return 0
		fi
	fi
	opts=$(_tftracer_options "$bin" "$cmd")
	# the value of the option before the cursor
	while read -r name val; do
		[[ ,$name, == *",$prev,"* ]] || continue
		[ -n "$val" ] || break
		local values
		values=$(_tftracer_values "$bin" "$cmd" "$name")
		if [ -n "$values" ]; then
			mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
		elif _tftracer_is_file_word "$val"; then
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return 0
	done <<<"$opts"
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(printf '%s\n' "$opts" | awk '{ n = split($1, a, ","); print a[n] }' | sort -u)" -- "$cur")
	else
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
	return 0
}

complete -F _tftracer tftracer
