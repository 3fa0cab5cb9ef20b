// SPDX-License-Identifier: MIT
module zap/bench/go

go 1.19
