//! The program a command runs, as the activity log may name it: never an argument, an
//! environment value or anything a shell would expand, only a plain program name, or a fixed
//! word (`shell`, `program`) when there is none.
//!
//! A shell string is split into words the way `sh` would (quotes, escapes, operators) but
//! nothing is expanded. Its simple commands are read in order and the first that runs a
//! program names it: what only changes the shell's state (`cd DIR`, `export`, a `for NAME in
//! WORDS` head, `[ ... ]`) is passed over, and so are the words that only set up the next one
//! (`env A=1`, `nohup`, `exec`, `time`, `nice -n 5`, `timeout 5`, `sh -c '...'`, whose script
//! is read the same way).

/// The longest program name the log keeps; a longer one is recorded by a fixed word.
const MAX_PROGRAM_CHARS: usize = 64;
/// How deep `sh -c 'sh -c "..."'` is followed.
const MAX_NESTING: usize = 3;

/// Commands that only change the shell's state or test something: the program is later.
const PASSED_OVER: &[&str] = &[
    "cd", "pushd", "popd", "export", "set", "unset", "umask", "alias", "source", ".", "[", "[[",
    "test", "true", "false", ":", "shift", "local", "readonly", "trap", "ulimit",
];
/// Reserved words that stand in front of a command.
const PREFIX_WORDS: &[&str] = &[
    "do", "then", "else", "elif", "if", "while", "until", "!", "{", "time", "done", "fi", "}",
];
const SHELLS: &[&str] = &["sh", "bash", "dash", "ash", "zsh", "ksh"];

/// The program a command runs: `argv`'s, or for `[SHELL, "-c", SCRIPT]` its script's.
pub fn program_name(argv: &[String]) -> String {
    let words: Vec<Word> = argv
        .iter()
        .map(|arg| Word {
            raw: arg.clone(),
            value: arg.clone(),
        })
        .collect();
    let fallback = match argv {
        [shell, flag, _] if flag == "-c" && is_shell(shell) => "shell",
        _ => "program",
    };
    match command_program(&words, 0) {
        Found::Program(name) => name,
        Found::PassedOver(Some(name)) => name,
        Found::PassedOver(None) | Found::Unnamed => fallback.to_string(),
    }
}

/// One word of a command: as written (`raw`), and with its quotes and escapes removed.
#[derive(Debug, Clone)]
struct Word {
    raw: String,
    value: String,
}

enum Token {
    Word(Word),
    /// `;`, `&&`, `||`, `|`, `&`, `(`, `)`, a newline: a simple command ends.
    Separator,
    /// `<`, `>`, `>>`, ...: the next word is a file, not a command.
    Redirect,
}

enum Found {
    Program(String),
    /// Only commands passed over, the first of them named if plain.
    PassedOver(Option<String>),
    /// A command whose program cannot be named plainly.
    Unnamed,
}

/// The program of the first simple command of a script that runs one.
fn script_program(script: &str, depth: usize) -> Found {
    let mut first_passed = None;
    let mut words = Vec::new();
    let mut tokens = lex(script).into_iter().peekable();
    loop {
        let token = tokens.next();
        match token {
            Some(Token::Word(word)) => {
                words.push(word);
                continue;
            }
            Some(Token::Redirect) => {
                // The file named after a redirection is not a command word.
                if let Some(Token::Word(_)) = tokens.peek() {
                    tokens.next();
                }
                continue;
            }
            Some(Token::Separator) | None => {}
        }
        if !words.is_empty() {
            match command_program(&words, depth) {
                Found::PassedOver(name) => first_passed = first_passed.or(name),
                found => return found,
            }
            words.clear();
        }
        if token.is_none() {
            return Found::PassedOver(first_passed);
        }
    }
}

/// The program one simple command runs.
fn command_program(words: &[Word], depth: usize) -> Found {
    let mut rest = words;
    while let Some((word, after)) = rest.split_first() {
        let raw = word.raw.as_str();
        if is_assignment(raw) || PREFIX_WORDS.contains(&raw) {
            rest = after;
            continue;
        }
        if raw == "for" || raw == "case" || raw == "select" {
            // `for NAME in WORDS`: nothing runs until the next command (`do ...`).
            return Found::PassedOver(None);
        }
        let Some(name) = plain_program(raw) else {
            return Found::Unnamed;
        };
        if PASSED_OVER.contains(&name) {
            return Found::PassedOver(Some(name.to_string()));
        }
        if let Some(next) = wrapped(name, after) {
            if next.is_empty() {
                return Found::Program(name.to_string());
            }
            rest = next;
            continue;
        }
        if is_shell(name) {
            return match shell_script(after) {
                Some(script) if depth < MAX_NESTING => match script_program(script, depth + 1) {
                    Found::PassedOver(None) => Found::Unnamed,
                    found => found,
                },
                Some(_) => Found::Unnamed,
                None => Found::Program(name.to_string()),
            };
        }
        return Found::Program(name.to_string());
    }
    Found::PassedOver(None)
}

/// For a wrapper that runs the command after it, the words from that command on.
fn wrapped<'a>(name: &str, after: &'a [Word]) -> Option<&'a [Word]> {
    // Options that take the next word as their value, per wrapper.
    let (valued, positional): (&[&str], usize) = match name {
        "env" => (
            &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
            0,
        ),
        "nice" => (&["-n", "--adjustment"], 0),
        "timeout" => (&["-s", "--signal", "-k", "--kill-after"], 1),
        "stdbuf" => (&["-i", "-o", "-e"], 0),
        "nohup" | "exec" | "command" | "builtin" | "setsid" | "time" | "chrt" => (&[], 0),
        _ => return None,
    };
    let mut rest = after;
    let mut positional_left = positional;
    while let Some((word, next)) = rest.split_first() {
        let raw = word.raw.as_str();
        if valued.contains(&raw) {
            rest = next.get(1..).unwrap_or(&[]);
        } else if raw.starts_with('-') || (name == "env" && is_assignment(raw)) {
            rest = next;
        } else if positional_left > 0 {
            positional_left -= 1;
            rest = next;
        } else {
            break;
        }
    }
    Some(rest)
}

/// The script of `SHELL [-flags]c SCRIPT`, if the shell is given one.
fn shell_script(after: &[Word]) -> Option<&str> {
    let mut words = after.iter();
    for word in words.by_ref() {
        let flags = word.raw.strip_prefix('-')?;
        if flags.contains('c') && flags.bytes().all(|b| b.is_ascii_alphabetic()) {
            return words.next().map(|w| w.value.as_str());
        }
    }
    None
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    SHELLS.contains(&name)
}

/// `word`'s base name, if the word is a plain path (nothing a shell would expand or quote, in
/// the directory either) and the name a plain name.
fn plain_program(word: &str) -> Option<&str> {
    let plain_byte = |b: u8| b.is_ascii_alphanumeric() || b"._+-".contains(&b);
    if matches!(word, "[" | "[[" | ":" | ".") {
        return Some(word);
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    let plain = word.bytes().all(|b| plain_byte(b) || b == b'/')
        && (1..=MAX_PROGRAM_CHARS).contains(&name.len())
        && name.bytes().any(|b| b != b'.');
    plain.then_some(name)
}

/// A shell variable assignment such as `TOKEN=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// Splits a script into words and operators as `sh` would, expanding nothing.
fn lex(script: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = script.chars().peekable();
    let mut word: Option<Word> = None;
    let finish = |word: &mut Option<Word>, tokens: &mut Vec<Token>| {
        if let Some(w) = word.take() {
            tokens.push(Token::Word(w));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => finish(&mut word, &mut tokens),
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                finish(&mut word, &mut tokens);
                if c == '&' && chars.peek() == Some(&'>') {
                    chars.next();
                    tokens.push(Token::Redirect);
                    continue;
                }
                if matches!(c, '&' | '|' | ';') && chars.peek() == Some(&c) {
                    chars.next();
                }
                tokens.push(Token::Separator);
            }
            '<' | '>' => {
                finish(&mut word, &mut tokens);
                while matches!(chars.peek(), Some('<' | '>' | '&' | '|')) {
                    chars.next();
                }
                tokens.push(Token::Redirect);
            }
            '#' if word.is_none() => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        tokens.push(Token::Separator);
                        break;
                    }
                }
            }
            _ => {
                let w = word.get_or_insert_with(|| Word {
                    raw: String::new(),
                    value: String::new(),
                });
                w.raw.push(c);
                match c {
                    '\'' => {
                        for c in chars.by_ref() {
                            w.raw.push(c);
                            if c == '\'' {
                                break;
                            }
                            w.value.push(c);
                        }
                    }
                    '"' => {
                        while let Some(c) = chars.next() {
                            w.raw.push(c);
                            match c {
                                '"' => break,
                                '\\' => {
                                    if let Some(&next) = chars.peek() {
                                        chars.next();
                                        w.raw.push(next);
                                        if !matches!(next, '"' | '\\' | '$' | '`') {
                                            w.value.push('\\');
                                        }
                                        w.value.push(next);
                                    }
                                }
                                _ => w.value.push(c),
                            }
                        }
                    }
                    '\\' => {
                        if let Some(next) = chars.next() {
                            w.raw.push(next);
                            w.value.push(next);
                        }
                    }
                    // `$(...)`, `$((...))` and `` `...` `` are part of the word they stand in,
                    // whatever they hold (`i=$((i+1))` is one assignment, not a command `i+1`).
                    '$' if chars.peek() == Some(&'(') => {
                        w.value.push(c);
                        let mut depth = 0usize;
                        for c in chars.by_ref() {
                            w.raw.push(c);
                            w.value.push(c);
                            match c {
                                '(' => depth += 1,
                                ')' => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    '`' => {
                        w.value.push(c);
                        for c in chars.by_ref() {
                            w.raw.push(c);
                            w.value.push(c);
                            if c == '`' {
                                break;
                            }
                        }
                    }
                    _ => w.value.push(c),
                }
            }
        }
    }
    finish(&mut word, &mut tokens);
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn sh(script: &str) -> String {
        program_name(&argv(&["/bin/sh", "-c", script]))
    }

    #[test]
    fn names_the_program_and_nothing_else() {
        let name = |words: &[&str]| program_name(&argv(words));
        assert_eq!(
            name(&["/usr/bin/python3", "secret.py", "--key=s3cret"]),
            "python3"
        );
        assert_eq!(sh("TOKEN=s3cret curl -H x"), "curl");
        assert_eq!(sh("A=secret cmd"), "cmd");
        assert_eq!(sh("echo s3cret > f"), "echo");
        assert_eq!(sh("/usr/local/bin/node app.js"), "node");
        assert_eq!(sh("echo;secret"), "echo");
        // What a substitution or arithmetic holds is never a command of its own.
        assert_eq!(sh("i=0; i=$((i+1)); echo $i"), "echo");
        assert_eq!(sh("now=$(date +%s) python3 job.py"), "python3");
        assert_eq!(sh("x=`secret-tool lookup k` curl x"), "curl");
        assert_eq!(sh("$(which python3) app.py"), "shell");
    }

    #[test]
    fn names_the_program_after_what_only_sets_up() {
        assert_eq!(sh("cd /tmp/s3cret && python3 app.py"), "python3");
        assert_eq!(sh("cd \"a; secret\" && make"), "make");
        assert_eq!(sh("for f in secret words; do wc -l $f; done"), "wc");
        assert_eq!(sh("env -u SECRET A=1 B=\"x y\" node app.js"), "node");
        assert_eq!(sh("nohup nice -n 5 timeout -s KILL 30 yes"), "yes");
        assert_eq!(sh("sh -c 'cd /x && exec gcc -o a a.c'"), "gcc");
        assert_eq!(sh("bash -lc \"export A=1; pytest -q\""), "pytest");
        assert_eq!(sh("if [ -f x ]; then cat x; fi"), "cat");
        assert_eq!(sh("export A=1\n# a comment naming secret\nls -la"), "ls");
        assert_eq!(sh("(cd sub && make) >log 2>&1"), "make");
        assert_eq!(sh(">out seq 3"), "seq");
        assert_eq!(sh("cd /tmp"), "cd");
        assert_eq!(
            program_name(&argv(&["env", "-u", "SECRET", "python3", "-"])),
            "python3"
        );
        assert_eq!(program_name(&argv(&["env"])), "env");
    }

    #[test]
    fn what_is_not_a_plain_name_is_a_fixed_word() {
        let name = |words: &[&str]| program_name(&argv(words));
        assert_eq!(sh("curl${IFS}secret"), "shell");
        assert_eq!(sh("\"/usr/bin/py thon\" x"), "shell");
        assert_eq!(sh("'secret' x"), "shell");
        assert_eq!(sh("a\\b secret"), "shell");
        assert_eq!(sh("A=1 B=2"), "shell");
        assert_eq!(sh("   "), "shell");
        assert_eq!(sh(&"x".repeat(65)), "shell");
        assert_eq!(sh("for x in a b c"), "shell");
        assert_eq!(sh("cd $SECRET && $SECRET_TOOL x"), "shell");
        assert_eq!(sh("sh -c 'sh -c \"sh -c \\\"sh -c ls\\\"\"'"), "shell");
        assert_eq!(name(&["/usr/bin/py thon", "x"]), "program");
        assert_eq!(name(&["/opt/secret dir/run"]), "program");
        assert_eq!(sh("\"/usr/bin/secret word\" x"), "shell");
        assert_eq!(sh("$HOME/bin/tool"), "shell");
        assert_eq!(name(&["$secret"]), "program");
        assert_eq!(name(&["my secret", "x"]), "program");
        assert_eq!(name(&["/tmp/"]), "program");
        assert_eq!(name(&[".."]), "program");
        assert_eq!(name(&[]), "program");
    }
}
