module zap/bench/go

go 1.19
