/* The shared library the FIXTURE_NEEDS_DEP plugin links against; the test deletes it before loading. */
int fixture_dep_answer(void) { return 42; }
