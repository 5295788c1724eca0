package activities

// AddressHash is addressHash, for the tests of package activities_test.
var AddressHash = addressHash
