use super::*;

#[test]
fn every_built_in_entry_compiles() {
    let catalogue = Catalogue::built_in().unwrap();
    assert!(catalogue.entries().len() >= 10);
}
