package testwrappers

import "strconv"

// Errors as k6 logs them, and as the runner's check leaves them in the termination message.
const (
	K6MissingFile = `could not initialize 'test.js': could not load JS test 'file:///fleetbench/script/test.js': ` +
		`The moduleSpecifier "./lib/users.js" couldn't be found on local disk. Make sure that you've specified the right path to the file.`
	K6MissingExtension = `could not initialize 'test.js': could not load JS test 'file:///fleetbench/script/test.js': unknown modules ` +
		`["k6/x/faker"] were tried to be loaded, but couldn't - this likely means automatic extension resolution is required or a custom k6 binary with the required extensions is used`
)

// K6Log is msg as k6 logs an error.
func K6Log(msg string) string {
	return `time="2026-11-26T01:01:18Z" level=error msg=` + strconv.Quote(msg) + "\n"
}
