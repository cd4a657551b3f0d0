# bash completion for dtsim, installed by `make install` as
# share/bash-completion/completions/dtsim.  Commands and options are read
# from dtsim itself (`dtsim --help`, `dtsim COMMAND --help`), so they are
# those of the binary being completed and never drift from its help text.
_dtsim()
{
    local cur prev cmd words
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local bin=${COMP_WORDS[0]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        words=$("$bin" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')
        COMPREPLY=($(compgen -W "$words --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    case $prev in
        -o|--output)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --set|--grid|--zip|--seed|--replicates|-j|--jobs|--shard|--label|--baseline)
            return ;;
        --spread)
            COMPREPLY=($(compgen -W "sd se ci95 minmax" -- "$cur")); return ;;
        --format)
            COMPREPLY=($(compgen -W "md csv latex" -- "$cur")); return ;;
    esac
    case $cur in
        -*)
            words=$("$bin" "$cmd" --help 2>/dev/null | awk '/^  -/ {
                    n = split(substr($0, 3, 22), a, /[ ,]+/)
                    for (i = 1; i <= n; i++) if (a[i] ~ /^-/) print a[i] }')
            COMPREPLY=($(compgen -W "$words" -- "$cur"))
            return ;;
    esac
    case $cmd in
        help)
            words=$("$bin" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')
            COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
        list)
            words=$("$bin" list 2>/dev/null | sed -n 's/^\([a-z]*\).* (.*):$/\1/p')
            COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
        explain|keys)
            words=$("$bin" keys 2>/dev/null | sed -n 's/^  \([a-z][^ ]*\)$/\1/p')
            [ "$cmd" = explain ] && words="$words $("$bin" list protocols 2>/dev/null |
                sed -n 's/^  \([a-z][a-z-]*\) .*/algorithm.\1/p')"
            COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
        merge|plot)
            COMPREPLY=($(compgen -d -- "$cur")) ;;
        table)
            # the folder first, then the numeric columns of its summary.csv
            if [ "$COMP_CWORD" -eq 2 ]; then
                COMPREPLY=($(compgen -d -- "$cur"))
            else
                words=$(head -n 1 "${COMP_WORDS[2]}/summary.csv" 2>/dev/null | tr ',' ' ')
                COMPREPLY=($(compgen -W "$words" -- "$cur"))
            fi ;;
        *)
            COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur")) ;;
    esac
}
complete -o filenames -F _dtsim dtsim
