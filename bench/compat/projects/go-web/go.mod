module example.com/compatweb

go 1.19
