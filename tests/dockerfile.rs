//! The Dockerfile, replayed without a container engine: the build stage's COPYs into a scratch
//! root from what a clean checkout holds (minus .dockerignore), its RUN commands, and then the
//! runtime stage's `COPY --from=build` must find the binary it names. So the image cannot drift
//! from Cargo.toml (a bench or a template the build stage does not copy) without a test failing.

use crate::common;

use common::dockerfile::{Dockerfile, Ignore, Instruction, context_files};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A container's filesystem, rooted in a scratch directory.
struct Scratch {
    root: PathBuf,
    workdir: String,
    /// Cache mounts of the RUN being replayed: never part of the image.
    cache_mounts: Vec<String>,
}

impl Scratch {
    /// A fixed place per use: the replayed crate's path is part of cargo's fingerprint, so a
    /// new path each run would leave a new copy of its artifacts in target/ each time.
    fn new(name: &str) -> Scratch {
        let root = repo().join(format!("target/dockerfile-{name}"));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Scratch {
            root,
            workdir: "/".into(),
            cache_mounts: Vec::new(),
        }
    }

    /// Where a path of the container (absolute, or relative to WORKDIR) is in the scratch root.
    fn path(&self, path: &str) -> PathBuf {
        let absolute = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("{}/{path}", self.workdir.trim_end_matches('/'))
        };
        self.root.join(absolute.trim_start_matches('/'))
    }

    /// `COPY SRC... DEST` from the build context: a directory's contents, a file as itself.
    fn copy_from_context(&self, context: &[PathBuf], args: &[String]) {
        let (destination, sources) = args.split_last().expect("COPY needs a destination");
        let into_directory = destination.ends_with('/') || sources.len() > 1;
        for source in sources {
            let source = Path::new(source.trim_end_matches('/'));
            let files: Vec<&PathBuf> = context.iter().filter(|f| f.starts_with(source)).collect();
            assert!(
                !files.is_empty(),
                "COPY {}: not in the build context (a clean checkout minus .dockerignore)",
                source.display()
            );
            for file in files {
                let target = if *file == source {
                    if into_directory {
                        self.path(destination).join(file.file_name().unwrap())
                    } else {
                        self.path(destination)
                    }
                } else {
                    self.path(destination)
                        .join(file.strip_prefix(source).unwrap())
                };
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::fs::copy(repo().join(file), &target).unwrap();
            }
        }
    }

    fn run(&mut self, instruction: &Instruction) {
        self.cache_mounts = instruction
            .flags
            .iter()
            .filter_map(|flag| flag.strip_prefix("--mount="))
            .filter(|mount| mount.split(',').any(|part| part == "type=cache"))
            .filter_map(|mount| mount.split(',').find_map(|p| p.strip_prefix("target=")))
            .map(String::from)
            .collect();
        for command in instruction.args.split("&&") {
            let words: Vec<&str> = command.split_whitespace().collect();
            assert!(
                !command.contains(['|', ';', '>', '"', '\'', '$', '`']),
                "the replay runs plain commands joined by &&; cannot replay: {command}"
            );
            match words.as_slice() {
                ["cargo", "build", args @ ..] => self.cargo_build(args),
                ["cp" | "install", from, to] => {
                    let (from, to) = (self.path(from), self.path(to));
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    std::fs::copy(&from, &to)
                        .unwrap_or_else(|e| panic!("{command}: {e} ({})", from.display()));
                }
                ["mkdir", "-p", dirs @ ..] => {
                    for dir in dirs {
                        std::fs::create_dir_all(self.path(dir)).unwrap();
                    }
                }
                other => panic!("the replay does not know how to run {other:?}"),
            }
        }
        // What a cache mount held is not in the layer: a later COPY from it must fail.
        for mount in std::mem::take(&mut self.cache_mounts) {
            let _ = std::fs::remove_dir_all(self.path(&mount));
        }
    }

    /// Proves `cargo build ARGS` would succeed with the files present, without a second full
    /// release build: `cargo check` with the same arguments (less the profile) in the scratch
    /// directory does everything a build does that depends on which files are there — it reads
    /// the manifest and discovers every declared target (a bench file missing fails here), checks
    /// the lock file (`--locked`), and compiles the crate's front end, which expands every macro
    /// that reads the source tree (askama templates, `include_bytes!` of static/, the embedded
    /// migrations) relative to this manifest. Code generation and linking read no source file,
    /// and this suite's own build already compiled these sources into the binary. The check
    /// shares the warm target directory, so only the crate itself is checked again.
    fn cargo_build(&self, args: &[&str]) {
        assert!(
            args.contains(&"--locked"),
            "the image build must use --locked"
        );
        let bin = args
            .windows(2)
            .find_map(|w| (w[0] == "--bin").then_some(w[1]))
            .expect("cargo build --bin NAME: the image holds one binary");
        let profile = if args.contains(&"--release") {
            "release"
        } else {
            "debug"
        };
        let checked_args: Vec<&str> = args.iter().copied().filter(|a| *a != "--release").collect();
        let target_dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo().join("target"));
        let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .arg("check")
            .args(&checked_args)
            .arg("--offline")
            .current_dir(self.path("."))
            .env("CARGO_TARGET_DIR", target_dir)
            .output()
            .expect("run cargo");
        assert!(
            output.status.success(),
            "cargo check {checked_args:?} in the replayed build stage failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // Where cargo puts the binary; this suite's build of the same sources stands in for it.
        let artifact = self.path(&format!("target/{profile}/{bin}"));
        std::fs::create_dir_all(artifact.parent().unwrap()).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_fleetglass"), artifact).unwrap();
    }
}

#[test]
fn the_build_stage_replays_and_yields_the_binary_the_runtime_stage_copies() {
    let dockerfile = Dockerfile::read(&repo().join("Dockerfile"));
    let context = context_files(&repo());
    let ignore = Ignore::read(&repo());
    for kept_out in ["target/release/fleetglass", ".git/config"] {
        assert!(
            ignore.excludes(Path::new(kept_out)),
            "{kept_out} is sent as context"
        );
    }
    let [build, runtime] = dockerfile.stages.as_slice() else {
        panic!("one build stage and one runtime stage");
    };
    let mut scratch = Scratch::new("replay");
    for instruction in &build.instructions {
        match instruction.keyword.as_str() {
            "WORKDIR" => scratch.workdir = instruction.args.clone(),
            "COPY" => {
                assert!(
                    instruction.flags.is_empty(),
                    "the build stage copies from the context"
                );
                scratch.copy_from_context(&context, &instruction.words());
            }
            "RUN" => scratch.run(instruction),
            "ENV" | "ARG" | "LABEL" => {}
            other => panic!("the replay does not know {other} in the build stage"),
        }
    }
    assert!(
        runtime.from.starts_with("gcr.io/distroless/") && runtime.from.ends_with(":nonroot"),
        "distroless non-root runtime: {}",
        runtime.from
    );
    let copies: Vec<Vec<String>> = runtime
        .instructions
        .iter()
        .filter(|i| i.keyword == "COPY")
        .map(|i| {
            assert_eq!(i.flags, [format!("--from={}", build.name)], "{i:?}");
            i.words()
        })
        .collect();
    let [copy] = copies.as_slice() else {
        panic!("the runtime stage copies exactly the binary: {copies:?}");
    };
    let binary = scratch.path(&copy[0]);
    assert!(
        binary.is_file(),
        "the runtime stage copies {} from the build stage, which does not have it",
        copy[0]
    );
    let version = Command::new(&binary).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("fleetglass "));
    let entrypoint = runtime.instruction("ENTRYPOINT").args.clone();
    assert!(
        entrypoint.contains(&copy[1]),
        "{entrypoint} runs {}",
        copy[1]
    );
    assert!(runtime.instruction("USER").args.starts_with("nonroot"));
    let labels = &runtime.instruction("LABEL").args;
    for label in ["source", "version", "revision", "licenses"] {
        assert!(
            labels.contains(&format!("org.opencontainers.image.{label}=")),
            "{label}"
        );
    }
    std::fs::remove_dir_all(&scratch.root).unwrap();
}

#[test]
fn a_cache_mounted_target_is_not_in_the_image() {
    // The Dockerfile must copy the binary out of target/ inside the RUN that builds it; a
    // replayed stage that leaves it only in the cache mount has no binary for the runtime stage.
    let mut scratch = Scratch::new("cache-mount");
    scratch.workdir = "/src".into();
    std::fs::create_dir_all(scratch.path("target/release")).unwrap();
    std::fs::write(scratch.path("target/release/x"), "x").unwrap();
    scratch.run(&Instruction::parse(
        "RUN --mount=type=cache,target=/src/target mkdir -p out",
    ));
    assert!(!scratch.path("target/release/x").exists());
    assert!(scratch.path("out").is_dir());
    std::fs::remove_dir_all(&scratch.root).unwrap();
}

#[test]
fn dockerignore_keeps_what_a_pattern_names_out() {
    let ignore = Ignore::parse("target\n.git\n**/node_modules\n*.png.tmp\ndocs\n!docs/keep.md\n");
    for (path, ignored) in [
        ("target/debug/fleetglass", true),
        (".git/HEAD", true),
        ("static/node_modules/x.js", true),
        ("shot.png.tmp", true),
        ("docs/install.md", true),
        ("docs/keep.md", false),
        ("server/main.rs", false),
        ("targets.rs", false),
    ] {
        assert_eq!(ignore.excludes(Path::new(path)), ignored, "{path}");
    }
}
