package testdb

// TurnKey is the advisory lock a test binary holds while it uses the database.
const TurnKey = turnKey
