//! The command line's contract over every subcommand: `--help` shows an example, and a usage
//! error is one line `poscheck: error: ...` with exit code 2 (clap's errors and the
//! manifest's TOML errors included).

use crate::common;

use common::{poscheck, text};

/// The subcommands `poscheck --help` lists (without clap's `help`).
fn subcommands() -> Vec<String> {
    let o = poscheck(&["--help"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    let list: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| n != "help")
        .collect();
    assert!(list.len() >= 12, "too few subcommands found in:\n{help}");
    list
}

/// Stderr is exactly one line `poscheck: error: ...` and the exit code is 2.
fn assert_one_line_usage_error(o: &std::process::Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{what}: {}", text(o));
    assert_eq!(err.lines().count(), 1, "{what}: not one line: {}", text(o));
    assert!(err.starts_with("poscheck: error: "), "{what}: {}", text(o));
}

#[test]
fn every_subcommand_help_has_an_example() {
    for sub in subcommands() {
        let o = poscheck(&[&sub, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{sub} --help: {}", text(&o));
        let help = String::from_utf8_lossy(&o.stdout);
        let example = help
            .lines()
            .skip_while(|l| !l.starts_with("Example"))
            .nth(1)
            .unwrap_or("");
        assert!(
            example.contains(&format!("poscheck {sub}")),
            "{sub} --help has no example line with `poscheck {sub}`:\n{help}"
        );
    }
}

#[test]
fn every_usage_error_is_one_line_with_exit_2() {
    for sub in subcommands() {
        // `cc`, `c++` and `rustc` hand every argument to the compiler: an unknown flag is
        // the compiler's to reject, so they are checked with no argument at all.
        let o = if sub == "cc" || sub == "c++" || sub == "rustc" {
            poscheck(&[&sub])
        } else {
            poscheck(&[&sub, "--no-such-option"])
        };
        assert_one_line_usage_error(&o, &format!("{sub} with a bad option"));
    }
    let cases: &[&[&str]] = &[
        &[],
        &["no-such-subcommand"],
        &["run"],
        &["run", "--tries", "many", "x"],
        &["run", "--trie", "3", "x"],
        &[
            "compare",
            "--algos",
            "pos,nosuch",
            "--tries",
            "1",
            "/nonexistent",
        ],
        &["replay"],
        &["explore", "--algo", "nosuch", "/bin/true"],
        &["merge"],
    ];
    for args in cases {
        assert_one_line_usage_error(&poscheck(args), &format!("{args:?}"));
    }
}

#[test]
fn manifest_errors_name_the_file_and_line_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("manifest.toml"),
        "[[program]]\nname = \"x\"\nsource = 3\nexpect = \"assert\"\n",
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let o = poscheck(&["run", "--tries", "1", d]);
    assert_one_line_usage_error(&o, "bad manifest type");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{d}/manifest.toml:3:10: ")), "{err}");

    std::fs::write(
        dir.path().join("manifest.toml"),
        "[[program]]\nname = \"x\"\nsource = \"x.c\"\nexpect = \"assert\"\n\n\
         [[program]]\nname = \"x\"\nsource = \"y.c\"\nexpect = \"none\"\n",
    )
    .unwrap();
    let o = poscheck(&["build", d]);
    assert_one_line_usage_error(&o, "duplicate name");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{d}/manifest.toml:6: program \"x\" is listed twice"
        )),
        "{err}"
    );
}
