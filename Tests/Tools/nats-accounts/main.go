// nats-accounts makes what a NATS server in operator mode and its clients need, with the
// official libraries (Debian's golang-github-nats-io-jwt-dev and -nkeys-dev): an operator, an
// account, a user's .creds file, an expired user's, and a user of an account the server does
// not know. A test tool of Herald's suite, never part of the package.
//
// Usage: nats-accounts DIRECTORY   (prints a JSON summary of what it wrote)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

func must[T any](value T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats-accounts:", err)
		os.Exit(1)
	}
	return value
}

func write(dir, name string, data []byte) string {
	path := filepath.Join(dir, name)
	must(0, os.WriteFile(path, data, 0o600))
	return path
}

func user(account nkeys.KeyPair, name string, expires int64) []byte {
	key := must(nkeys.CreateUser())
	claims := jwt.NewUserClaims(must(key.PublicKey()))
	claims.Name = name
	claims.Expires = expires
	token := must(claims.Encode(account))
	seed := must(key.Seed())
	return must(jwt.FormatUserConfig(token, seed))
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: nats-accounts DIRECTORY")
		os.Exit(2)
	}
	dir := os.Args[1]
	operator := must(nkeys.CreateOperator())
	operatorClaims := jwt.NewOperatorClaims(must(operator.PublicKey()))
	operatorClaims.Name = "herald-test"
	operatorJWT := must(operatorClaims.Encode(operator))

	account := must(nkeys.CreateAccount())
	accountPublic := must(account.PublicKey())
	accountClaims := jwt.NewAccountClaims(accountPublic)
	accountClaims.Name = "herald"
	accountJWT := must(accountClaims.Encode(operator))

	stranger := must(nkeys.CreateAccount())

	nkeyUser := must(nkeys.CreateUser())
	summary := map[string]string{
		"operatorJWT":       write(dir, "operator.jwt", []byte(operatorJWT)),
		"accountPublicKey":  accountPublic,
		"accountJWT":        accountJWT,
		"userCreds":         write(dir, "user.creds", user(account, "herald", 0)),
		"expiredCreds":      write(dir, "expired.creds", user(account, "expired", time.Now().Add(-time.Hour).Unix())),
		"strangerCreds":     write(dir, "stranger.creds", user(stranger, "stranger", 0)),
		"nkeyUserSeed":      string(must(nkeyUser.Seed())),
		"nkeyUserPublicKey": must(nkeyUser.PublicKey()),
	}
	must(0, json.NewEncoder(os.Stdout).Encode(summary))
}
