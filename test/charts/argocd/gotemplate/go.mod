module gotemplate

go 1.21
