//! The smoke pass of every fuzz target: each runs over its committed corpus
//! (`fuzz/corpus/<target>/`, what libFuzzer kept of its runs) and a few
//! hostile inputs, and must return for every one.

use std::path::Path;

use flotilla_fuzzing::TARGETS;

#[test]
fn every_target_survives_its_corpus() {
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for (name, target) in TARGETS {
        let dir = corpora.join(name);
        let mut inputs: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("no corpus for {name} in {}: {e}", dir.display()))
            .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
            .collect();
        assert!(!inputs.is_empty(), "{name}: empty corpus");
        inputs.extend([Vec::new(), vec![0; 64], vec![0xff; 64], b"\x00\x01\x00\x00\xff\xff\xff\xff".to_vec()]);
        for input in &inputs {
            target(input);
        }
    }
}
