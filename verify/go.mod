module github.com/hookline/hookline/verify

go 1.21
