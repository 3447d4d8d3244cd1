-- A level catalog as entityworks 0.2.3 wrote it (revision 0008): its int, float and str
-- columns ANY with a CHECK on typeof. Made by that release's CLI (generate dungeon -n 2
-- --width 30 --height 20 --seed 1; caves --seed 5; labyrinth 21x21 --seed 3; sudoku solve;
-- entropy) and sqlite3's iterdump; read by tests/entityworks/migrate/test_migrate.py.
BEGIN TRANSACTION;
CREATE TABLE entityworks_schema (
	table_name TEXT NOT NULL, 
	column_name TEXT NOT NULL, 
	position INTEGER NOT NULL, 
	logical_type TEXT NOT NULL, 
	nullable BOOLEAN NOT NULL, 
	primary_key BOOLEAN NOT NULL, 
	max_length INTEGER, 
	details TEXT, 
	PRIMARY KEY (table_name, column_name)
);
CREATE TABLE entityworks_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT entityworks_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "entityworks_version" VALUES('0008_entries_and_outcomes');
CREATE TABLE entropy_reports (
	id INTEGER NOT NULL, 
	path ANY NOT NULL CONSTRAINT type_path CHECK (typeof("path") = 'text' OR "path" IS NULL), 
	size ANY NOT NULL CONSTRAINT type_size CHECK (typeof("size") = 'integer' OR "size" IS NULL), 
	sha256 ANY NOT NULL CONSTRAINT type_sha256 CHECK (typeof("sha256") = 'text' OR "sha256" IS NULL), 
	entropy ANY NOT NULL CONSTRAINT type_entropy CHECK (typeof("entropy") = 'real' OR "entropy" IS NULL), 
	optimum_compression ANY NOT NULL CONSTRAINT type_optimum_compression CHECK (typeof("optimum_compression") = 'real' OR "optimum_compression" IS NULL), 
	chi_square ANY CONSTRAINT type_chi_square CHECK (typeof("chi_square") = 'real' OR "chi_square" IS NULL), 
	chi_square_probability ANY CONSTRAINT type_chi_square_probability CHECK (typeof("chi_square_probability") = 'real' OR "chi_square_probability" IS NULL), 
	mean ANY CONSTRAINT type_mean CHECK (typeof("mean") = 'real' OR "mean" IS NULL), 
	monte_carlo_pi ANY CONSTRAINT type_monte_carlo_pi CHECK (typeof("monte_carlo_pi") = 'real' OR "monte_carlo_pi" IS NULL), 
	monte_carlo_error ANY CONSTRAINT type_monte_carlo_error CHECK (typeof("monte_carlo_error") = 'real' OR "monte_carlo_error" IS NULL), 
	serial_correlation ANY CONSTRAINT type_serial_correlation CHECK (typeof("serial_correlation") = 'real' OR "serial_correlation" IS NULL), 
	unique_symbols ANY NOT NULL CONSTRAINT type_unique_symbols CHECK (typeof("unique_symbols") = 'integer' OR "unique_symbols" IS NULL), 
	distribution TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	PRIMARY KEY (id)
)
 STRICT

;
INSERT INTO "entropy_reports" VALUES(1,'/tmp/e1.bin',17,'9db07dad3f51e31144ae853a76bba4739609c14ae813ec2cd7080726acc10eb0',2.77190237203855804892e+00,6.53512203495180301606e+01,7.20882352941176350212e+02,0.0,9.8823529411764710062e+01,4.0,2.73239544735162702697e+01,-1.41785358091374658062e-01,8,'[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,2,0,0,2,0,0,0,5,0,0,3,0,0,1,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]','2026-12-06 04:36:42.000000');
CREATE TABLE maps (
	id INTEGER NOT NULL, 
	kind ANY NOT NULL CONSTRAINT type_kind CHECK (typeof("kind") = 'text' OR "kind" IS NULL), 
	generator ANY NOT NULL CONSTRAINT type_generator CHECK (typeof("generator") = 'text' OR "generator" IS NULL), 
	parameters TEXT NOT NULL, 
	seed ANY CONSTRAINT type_seed CHECK (typeof("seed") = 'integer' OR "seed" IS NULL), 
	width ANY NOT NULL CONSTRAINT type_width CHECK (typeof("width") = 'integer' OR "width" IS NULL), 
	height ANY NOT NULL CONSTRAINT type_height CHECK (typeof("height") = 'integer' OR "height" IS NULL), 
	open_ratio ANY NOT NULL CONSTRAINT type_open_ratio CHECK (typeof("open_ratio") = 'real' OR "open_ratio" IS NULL), 
	region_count ANY NOT NULL CONSTRAINT type_region_count CHECK (typeof("region_count") = 'integer' OR "region_count" IS NULL), 
	largest_region ANY NOT NULL CONSTRAINT type_largest_region CHECK (typeof("largest_region") = 'integer' OR "largest_region" IS NULL), 
	created_at TEXT NOT NULL, 
	build_success INTEGER, 
	rooms_asked ANY CONSTRAINT type_rooms_asked CHECK (typeof("rooms_asked") = 'integer' OR "rooms_asked" IS NULL), 
	rooms_built ANY CONSTRAINT type_rooms_built CHECK (typeof("rooms_built") = 'integer' OR "rooms_built" IS NULL), 
	connected INTEGER, 
	grid BLOB NOT NULL, 
	PRIMARY KEY (id)
)
 STRICT

;
INSERT INTO "maps" VALUES(1,'dungeon','generators.maps.dungeon','{"width":30,"height":20,"method":"one_start_room","rooms":15,"room_min":3,"room_max":15,"room_min_width":3,"room_max_width":15,"room_min_height":3,"room_max_height":15,"room_distance":5,"corridor_distance":2,"corridor_min":3,"corridor_max":15,"max_turns":5,"corridor_space":2,"build_prob":50,"breakout":250}',1,30,20,0.135,1,81,'2026-12-06 04:35:46.000000',0,15,1,1,X'010102140000001E00000000000000000000000100000000000000FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF007FFFFC01FFFFF007FFFFC01FFFFF007FFFFC01FFFFF007FFFFC01FFFFF007FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF');
INSERT INTO "maps" VALUES(2,'dungeon','generators.maps.dungeon','{"width":30,"height":20,"method":"one_start_room","rooms":15,"room_min":3,"room_max":15,"room_min_width":3,"room_max_width":15,"room_min_height":3,"room_max_height":15,"room_distance":5,"corridor_distance":2,"corridor_min":3,"corridor_max":15,"max_turns":5,"corridor_space":2,"build_prob":50,"breakout":250}',2,30,20,0.13,1,78,'2026-12-06 04:35:46.000000',0,15,1,1,X'010102140000001E00000000000000000000000100000000000000FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC001FFFF0007FFFC001FFFF0007FFFC001FFFF0007FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF');
INSERT INTO "maps" VALUES(3,'caves','generators.maps.caves','{"width":30,"height":20,"close_cell_prob":45,"visits":50000,"neighbours":4,"smoothing":5,"empty_neighbours":3,"filling_neighbours":4,"lower_limit":16,"upper_limit":500,"connect":true,"corridor_min":2,"corridor_max":5,"max_turns":10,"corridor_space":2,"breakout":100000,"mode":"faithful"}',5,30,20,3.46666666666666678509e-01,1,208,'2026-12-06 04:35:53.000000',NULL,NULL,NULL,NULL,X'010102140000001E00000000000000000000000100000000000000FFFC3FFFFFE07FFFFF80FFFFF001FFFFDE07FFFF783FFE01C1F9FBF83FC3EFC1FE0FBE0FF87EF03FE1FB807F07E600F81F0C00E07C380001F07007CFC1F81FFF0FF0FFFE7FFFFFFFFFFFFF');
INSERT INTO "maps" VALUES(4,'labyrinth','generators.maps.islands','{"width":21,"height":21,"close_cell_prob":45,"island":false,"neighbours":4,"visits":50000,"mode":"faithful"}',3,21,21,4.53514739229024965716e-01,6,106,'2026-12-06 04:35:56.000000',NULL,NULL,NULL,NULL,X'010102150000001500000000000000000000000100000000000000EFFFFD40016AFFEB55415AAAEAD55556AAAAB55555AAAAAD55556AAAAB55555AAAAAD55556AAAAB55555AAAAAD55556AAAAB55145AAFFE80');
CREATE TABLE maps_caves (
	parent_key ANY NOT NULL CONSTRAINT type_parent_key CHECK (typeof("parent_key") = 'integer' OR "parent_key" IS NULL), 
	position ANY NOT NULL CONSTRAINT type_position CHECK (typeof("position") = 'integer' OR "position" IS NULL), 
	number ANY NOT NULL CONSTRAINT type_number CHECK (typeof("number") = 'integer' OR "number" IS NULL), 
	cells ANY NOT NULL CONSTRAINT type_cells CHECK (typeof("cells") = 'integer' OR "cells" IS NULL), 
	x ANY NOT NULL CONSTRAINT type_x CHECK (typeof("x") = 'integer' OR "x" IS NULL), 
	y ANY NOT NULL CONSTRAINT type_y CHECK (typeof("y") = 'integer' OR "y" IS NULL), 
	width ANY NOT NULL CONSTRAINT type_width CHECK (typeof("width") = 'integer' OR "width" IS NULL), 
	height ANY NOT NULL CONSTRAINT type_height CHECK (typeof("height") = 'integer' OR "height" IS NULL), 
	centroid_x ANY NOT NULL CONSTRAINT type_centroid_x CHECK (typeof("centroid_x") = 'real' OR "centroid_x" IS NULL), 
	centroid_y ANY NOT NULL CONSTRAINT type_centroid_y CHECK (typeof("centroid_y") = 'real' OR "centroid_y" IS NULL), 
	PRIMARY KEY (parent_key, position), 
	FOREIGN KEY(parent_key) REFERENCES maps (id) ON DELETE CASCADE
)
 WITHOUT ROWID,
 STRICT

;
INSERT INTO "maps_caves" VALUES(3,0,1,26,2,12,5,7,3.69230769230769251265e+00,1.50384615384615383248e+01);
INSERT INTO "maps_caves" VALUES(3,1,2,117,7,0,14,18,1.38717948717948722501e+01,9.10256410256410219972e+00);
INSERT INTO "maps_caves" VALUES(3,2,3,43,21,6,7,10,2.43023255813953475978e+01,1.07209302325581390391e+01);
CREATE TABLE maps_corridors (
	parent_key ANY NOT NULL CONSTRAINT type_parent_key CHECK (typeof("parent_key") = 'integer' OR "parent_key" IS NULL), 
	position ANY NOT NULL CONSTRAINT type_position CHECK (typeof("position") = 'integer' OR "position" IS NULL), 
	length ANY NOT NULL CONSTRAINT type_length CHECK (typeof("length") = 'integer' OR "length" IS NULL), 
	start_x ANY NOT NULL CONSTRAINT type_start_x CHECK (typeof("start_x") = 'integer' OR "start_x" IS NULL), 
	start_y ANY NOT NULL CONSTRAINT type_start_y CHECK (typeof("start_y") = 'integer' OR "start_y" IS NULL), 
	end_x ANY NOT NULL CONSTRAINT type_end_x CHECK (typeof("end_x") = 'integer' OR "end_x" IS NULL), 
	end_y ANY NOT NULL CONSTRAINT type_end_y CHECK (typeof("end_y") = 'integer' OR "end_y" IS NULL), 
	path BLOB NOT NULL, 
	PRIMARY KEY (parent_key, position), 
	FOREIGN KEY(parent_key) REFERENCES maps (id) ON DELETE CASCADE
)
 WITHOUT ROWID,
 STRICT

;
INSERT INTO "maps_corridors" VALUES(3,0,3,21,14,19,14,X'012A1C04A0');
INSERT INTO "maps_corridors" VALUES(3,1,19,13,3,3,11,X'011A0624A95AAA9550');
CREATE TABLE maps_placements (
	parent_key ANY NOT NULL CONSTRAINT type_parent_key CHECK (typeof("parent_key") = 'integer' OR "parent_key" IS NULL), 
	position ANY NOT NULL CONSTRAINT type_position CHECK (typeof("position") = 'integer' OR "position" IS NULL), 
	x ANY NOT NULL CONSTRAINT type_x CHECK (typeof("x") = 'integer' OR "x" IS NULL), 
	y ANY NOT NULL CONSTRAINT type_y CHECK (typeof("y") = 'integer' OR "y" IS NULL), 
	label ANY NOT NULL CONSTRAINT type_label CHECK (typeof("label") = 'text' OR "label" IS NULL), 
	clearance ANY NOT NULL CONSTRAINT type_clearance CHECK (typeof("clearance") = 'integer' OR "clearance" IS NULL), 
	PRIMARY KEY (parent_key, position), 
	FOREIGN KEY(parent_key) REFERENCES maps (id) ON DELETE CASCADE
)
 WITHOUT ROWID,
 STRICT

;
CREATE TABLE maps_rooms (
	parent_key ANY NOT NULL CONSTRAINT type_parent_key CHECK (typeof("parent_key") = 'integer' OR "parent_key" IS NULL), 
	position ANY NOT NULL CONSTRAINT type_position CHECK (typeof("position") = 'integer' OR "position" IS NULL), 
	x ANY NOT NULL CONSTRAINT type_x CHECK (typeof("x") = 'integer' OR "x" IS NULL), 
	y ANY NOT NULL CONSTRAINT type_y CHECK (typeof("y") = 'integer' OR "y" IS NULL), 
	width ANY NOT NULL CONSTRAINT type_width CHECK (typeof("width") = 'integer' OR "width" IS NULL), 
	height ANY NOT NULL CONSTRAINT type_height CHECK (typeof("height") = 'integer' OR "height" IS NULL), 
	PRIMARY KEY (parent_key, position), 
	FOREIGN KEY(parent_key) REFERENCES maps (id) ON DELETE CASCADE
)
 WITHOUT ROWID,
 STRICT

;
INSERT INTO "maps_rooms" VALUES(1,0,10,5,9,9);
INSERT INTO "maps_rooms" VALUES(2,0,8,7,13,6);
CREATE TABLE sudoku_entries (
	id INTEGER NOT NULL, 
	source ANY NOT NULL CONSTRAINT type_source CHECK (typeof("source") = 'text' OR "source" IS NULL), 
	position ANY NOT NULL CONSTRAINT type_position CHECK (typeof("position") = 'integer' OR "position" IS NULL), 
	name ANY NOT NULL CONSTRAINT type_name CHECK (typeof("name") = 'text' OR "name" IS NULL), 
	line ANY NOT NULL CONSTRAINT type_line CHECK (typeof("line") = 'integer' OR "line" IS NULL), 
	puzzle_id ANY NOT NULL CONSTRAINT type_puzzle_id CHECK (typeof("puzzle_id") = 'integer' OR "puzzle_id" IS NULL), 
	PRIMARY KEY (id), 
	CONSTRAINT fk_sudoku_entries_puzzle_id FOREIGN KEY(puzzle_id) REFERENCES sudoku_puzzles (id) ON DELETE CASCADE, 
	CONSTRAINT uq_sudoku_entries_source_position UNIQUE (source, position)
)
 STRICT

;
INSERT INTO "sudoku_entries" VALUES(1,'p1.txt',0,'line 1',1,1);
CREATE TABLE sudoku_puzzles (
	id INTEGER NOT NULL, 
	source ANY NOT NULL CONSTRAINT type_source CHECK (typeof("source") = 'text' OR "source" IS NULL), 
	name ANY NOT NULL CONSTRAINT type_name CHECK (typeof("name") = 'text' OR "name" IS NULL), 
	puzzle ANY NOT NULL CONSTRAINT type_puzzle CHECK (typeof("puzzle") = 'text' OR "puzzle" IS NULL), 
	solution ANY CONSTRAINT type_solution CHECK (typeof("solution") = 'text' OR "solution" IS NULL), 
	clues ANY DEFAULT 0 NOT NULL CONSTRAINT type_clues CHECK (typeof("clues") = 'integer' OR "clues" IS NULL), 
	solution_count ANY DEFAULT 0 NOT NULL CONSTRAINT type_solution_count CHECK (typeof("solution_count") = 'integer' OR "solution_count" IS NULL), 
	difficulty ANY CONSTRAINT type_difficulty CHECK (typeof("difficulty") = 'integer' OR "difficulty" IS NULL), 
	nodes ANY CONSTRAINT type_nodes CHECK (typeof("nodes") = 'integer' OR "nodes" IS NULL), 
	created_at TEXT NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (puzzle)
)
 STRICT

;
INSERT INTO "sudoku_puzzles" VALUES(1,'p1.txt','line 1','003020600900305001001806400008102900700000008006708200002609500800203009005010300','483921657967345821251876493548132976729564138136798245372689514814253769695417382',32,1,0,1,'2026-12-06 04:36:40.000000');
CREATE INDEX ix_maps_kind ON maps (kind);
CREATE INDEX ix_maps_kind_width_height_region_count_open_ratio ON maps (kind, width, height, region_count, open_ratio);
CREATE INDEX ix_maps_region_count_open_ratio_width_height ON maps (region_count, open_ratio, width, height);
CREATE INDEX ix_maps_largest_region ON maps (largest_region);
CREATE INDEX ix_maps_kind_largest_region ON maps (kind, largest_region);
CREATE INDEX ix_maps_seed ON maps (seed);
CREATE INDEX ix_entropy_reports_sha256 ON entropy_reports (sha256);
CREATE INDEX ix_sudoku_entries_puzzle_id ON sudoku_entries (puzzle_id);
COMMIT;
