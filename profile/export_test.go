package profile

// ModelQuiet is modelQuiet, for the tests of the model job's waits.
const ModelQuiet = modelQuiet
