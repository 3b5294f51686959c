//! ELF checks before running a target, and symbolisation of crash addresses (goblin).
//!
//! LD_PRELOAD only works on dynamically linked executables of the loader's architecture, so a
//! target that is not an x86-64 dynamic ELF would silently run uncontrolled: refuse it with
//! the reason instead.

use goblin::elf::{header, program_header, Elf};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Why a path cannot be run under poscheck.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ElfError {
    #[error("{0}: no such file")]
    Missing(String),
    #[error("{0}: is a directory")]
    Directory(String),
    #[error("{0}: not executable (no execute permission)")]
    NotExecutable(String),
    #[error("{0}: is a script (#!), not an ELF binary; run poscheck on the interpreter's target instead")]
    Script(String),
    #[error("{0}: not an ELF file")]
    NotElf(String),
    #[error("{0}: 32-bit ELF; only x86-64 is supported")]
    Bits32(String),
    #[error("{0}: ELF for another machine (e_machine {1}); only x86-64 is supported")]
    Machine(String, u16),
    #[error("{0}: statically linked; LD_PRELOAD cannot interpose (relink dynamically)")]
    Static(String),
    #[error("{0}: cannot read: {1}")]
    Io(String, String),
}

/// What the check learned about a runnable target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfInfo {
    /// Imports at least one function that makes or synchronises threads (pthread, semaphore,
    /// C11 threads, `std::thread`, OpenMP; see [`makes_threads`]): else nothing is scheduled.
    pub uses_pthread: bool,
    /// Compiled with `-fsanitize=thread` (imports `__tsan_init` or `__tsan_func_entry`, as
    /// every instrumented unit does): its memory accesses can be scheduling points.
    pub instrumented: bool,
}

/// Check that `path` is an x86-64, dynamically linked, executable ELF.
pub fn check(path: &Path) -> Result<ElfInfo, ElfError> {
    let name = path.display().to_string();
    let meta = fs::metadata(path).map_err(|_| ElfError::Missing(name.clone()))?;
    if meta.is_dir() {
        return Err(ElfError::Directory(name));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(ElfError::NotExecutable(name));
    }
    let bytes = fs::read(path).map_err(|e| ElfError::Io(name.clone(), e.to_string()))?;
    if bytes.starts_with(b"#!") {
        return Err(ElfError::Script(name));
    }
    if !bytes.starts_with(b"\x7fELF") {
        return Err(ElfError::NotElf(name));
    }
    if bytes.get(header::EI_CLASS) == Some(&header::ELFCLASS32) {
        return Err(ElfError::Bits32(name));
    }
    let elf = Elf::parse(&bytes).map_err(|_| ElfError::NotElf(name.clone()))?;
    if !elf.is_64 {
        return Err(ElfError::Bits32(name));
    }
    if elf.header.e_machine != header::EM_X86_64 {
        return Err(ElfError::Machine(name, elf.header.e_machine));
    }
    let has_interp = elf
        .program_headers
        .iter()
        .any(|p| p.p_type == program_header::PT_INTERP);
    if !has_interp || elf.dynamic.is_none() {
        return Err(ElfError::Static(name));
    }
    let uses_pthread = elf
        .dynsyms
        .iter()
        .any(|s| s.is_import() && elf.dynstrtab.get_at(s.st_name).is_some_and(makes_threads));
    let instrumented = elf.dynsyms.iter().any(|s| {
        s.is_import()
            && elf
                .dynstrtab
                .get_at(s.st_name)
                .is_some_and(|n| n == "__tsan_init" || n == "__tsan_func_entry")
    });
    Ok(ElfInfo {
        uses_pthread,
        instrumented,
    })
}

/// Whether importing the symbol `name` means the program uses threads: a pthread, POSIX
/// semaphore or C11 `<threads.h>` function, libstdc++'s `std::thread` (threads created
/// inside libstdc++, so the program itself may import no pthread function at all) and
/// condition variables, or OpenMP's runtime (libgomp creates the threads).
fn makes_threads(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "pthread_",
        "sem_",
        "thrd_",
        "mtx_",
        "cnd_",
        "call_once",
        "GOMP_",
        "omp_",
        // std::thread (ctor, join, detach, ...), std::condition_variable(_any).
        "_ZNSt6thread",
        "_ZNSt18condition_variable",
        "_ZNSt22condition_variable_any",
        "_ZNSt3_V222condition_variable_any",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// One line of `/proc/<pid>/maps` for a file-backed mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    pub path: String,
}

/// Parse the file-backed mappings of `/proc/<pid>/maps` text.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let range = it.next()?;
            let _perms = it.next()?;
            let offset = u64::from_str_radix(it.next()?, 16).ok()?;
            let _dev = it.next()?;
            let _inode = it.next()?;
            let path = it.next()?;
            if !path.starts_with('/') {
                return None;
            }
            let (s, e) = range.split_once('-')?;
            Some(Mapping {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                offset,
                path: path.to_string(),
            })
        })
        .collect()
}

/// The mapped file holding the absolute `pc` and the address of `pc` in that file's own
/// terms (its link-time virtual address: what `addr2line -e FILE` takes).
pub fn locate(pc: u64, maps: &[Mapping]) -> Option<(String, u64)> {
    let m = maps.iter().find(|m| m.start <= pc && pc < m.end)?;
    let bytes = fs::read(&m.path).ok()?;
    let elf = Elf::parse(&bytes).ok()?;
    let bias = if elf.header.e_type == header::ET_DYN {
        maps.iter()
            .filter(|x| x.path == m.path && x.offset == 0)
            .map(|x| x.start)
            .min()?
    } else {
        0
    };
    Some((m.path.clone(), pc.checked_sub(bias)?))
}

/// `function+0xoff (file)` for an absolute `pc`, using the process's mappings (ASLR is off,
/// so addresses are those of the run) and the file's symbol tables.
pub fn symbolise(pc: u64, maps: &[Mapping]) -> Option<String> {
    let m = maps.iter().find(|m| m.start <= pc && pc < m.end)?;
    let file = Path::new(&m.path);
    let short = file.file_name()?.to_string_lossy().into_owned();
    let bytes = fs::read(file).ok()?;
    let elf = Elf::parse(&bytes).ok()?;
    // Load bias: where file offset 0 is mapped, for position-independent objects.
    let bias = if elf.header.e_type == header::ET_DYN {
        maps.iter()
            .filter(|x| x.path == m.path && x.offset == 0)
            .map(|x| x.start)
            .min()?
    } else {
        0
    };
    let vaddr = pc.checked_sub(bias)?;
    let found = elf
        .syms
        .iter()
        .map(|s| (s, &elf.strtab))
        .chain(elf.dynsyms.iter().map(|s| (s, &elf.dynstrtab)))
        .filter(|(s, _)| {
            s.is_function() && s.st_value <= vaddr && vaddr < s.st_value + s.st_size.max(1)
        })
        .find_map(|(s, tab)| {
            tab.get_at(s.st_name)
                .map(|n| (n.to_string(), vaddr - s.st_value))
        });
    Some(match found {
        Some((name, off)) => format!("{name}+{off:#x} in {short}"),
        None => format!("{vaddr:#x} in {short}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_missing_and_non_elf_files_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert!(matches!(check(&missing), Err(ElfError::Missing(_))));
        let script = dir.path().join("s.sh");
        fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(check(&script), Err(ElfError::Script(_))));
        let text = dir.path().join("t");
        fs::write(&text, "hello").unwrap();
        assert!(matches!(check(&text), Err(ElfError::NotExecutable(_))));
        fs::set_permissions(&text, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(check(&text), Err(ElfError::NotElf(_))));
        assert!(matches!(check(dir.path()), Err(ElfError::Directory(_))));
    }

    #[test]
    fn threads_from_libraries_count_as_threads() {
        for n in [
            "pthread_create",
            "sem_wait",
            "thrd_create",
            "mtx_lock",
            "cnd_wait",
            "call_once",
            "GOMP_parallel",
            "omp_get_thread_num",
            "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
            "_ZNSt18condition_variable10notify_oneEv",
            "_ZNSt3_V222condition_variable_anyC1Ev",
        ] {
            assert!(makes_threads(n), "{n}");
        }
        for n in [
            "printf",
            "malloc",
            "_ZNSt8ios_base4InitC1Ev",
            "sched_yield",
            "syscall",
        ] {
            assert!(!makes_threads(n), "{n}");
        }
    }

    #[test]
    fn parses_maps_lines() {
        let maps = parse_maps(
            "555555554000-555555555000 r--p 00000000 08:01 123 /usr/bin/x\n\
             7ffff7fc3000-7ffff7fc7000 r--p 00000000 00:00 0 [vvar]\n",
        );
        assert_eq!(maps.len(), 1);
        assert_eq!(maps[0].start, 0x555555554000);
        assert_eq!(maps[0].path, "/usr/bin/x");
    }
}
