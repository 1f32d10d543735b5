"""Closed noun lists for the precision gate: what can be owned, what is a feeling, what is a
placeholder. Closed on purpose: an unknown head noun makes ``owns`` abstain, never guess."""

from __future__ import annotations


def closed(words: str) -> frozenset[str]:
    """A closed word list written as whitespace-separated words."""
    return frozenset(words.split())


OWNABLE_HEADS: frozenset[str] = closed(
    """
    car cars truck van suv hatchback sedan convertible jeep minivan pickup motorbike motorcycle
    scooter moped vespa bike bikes bicycle e-bike ebike tricycle skateboard longboard surfboard
    snowboard skis kayak canoe boat sailboat yacht rv camper caravan trailer tractor golf
    house home apartment flat condo cabin cottage villa bungalow farm garden garage yard
    studio shop store cafe bakery restaurant business bar
    dog dogs puppy puppies pup pups cat cats kitten kittens horse horses pony rabbit rabbits bunny
    hamster hamsters guinea parrot parrots bird birds fish goldfish turtle tortoise snake lizard
    gecko chicken chickens goat goats pig pigs ferret pet pets
    laptop laptops computer pc desktop macbook tablet ipad kindle ereader e-reader phone
    smartphone iphone watch smartwatch camera cameras drone printer console playstation xbox
    switch tv television monitor headphones earbuds speaker speakers keyboard mouse router
    server nas deck setup rig workstation kit
    piano guitar guitars violin cello drum drums drumkit ukulele flute saxophone trumpet
    keyboard harp banjo bass synth synthesizer amp microphone turntable
    stove grill oven fridge freezer blender mixer juicer kettle espresso machine
    sofa couch bed desk chair table bookshelf bookcase lamp rug mirror wardrobe dresser
    tent backpack sleeping-bag telescope microscope sewing-machine loom kiln easel
    book books cookbook novel novels library records vinyl comics shoes boots sneakers
    jacket coat dress suit ring necklace bracelet earrings
    tools toolbox saw drill lathe 3d
    plant plants tree trees aquarium terrarium
    """
)
"""Head nouns of things a person can own; ``owns`` otherwise needs a name or a model."""

ABSTRACT_NOUNS: frozenset[str] = closed(
    """
    love passion respect admiration appreciation affection care compassion kindness
    joy happiness fun blast time times luck energy purpose strength courage confidence hope
    hopes faith trust patience peace pride gratitude sense feeling feelings emotions vibes
    advice tips tip help support guidance feedback encouragement motivation inspiration
    news update updates idea ideas thought thoughts opinion opinions chance opportunity
    opportunities adventure adventures experience experiences journey memories memory moment
    moments leads turnout response reaction results progress success skills skill talents
    talent interests interest paths path lots lot plenty ton tons bunch few bit more much
    stuff things thing way ways mess trouble problem problems issue issues connection
    community family friends life world people folks everyone everybody others
    color colour texture shade hue tone grain shape sound smell scent vibe feel feels atmosphere
    view views loads heaps goal goals dream dreams plan plans priority priorities value values
    challenge challenges change changes
    """
)
"""Nouns of feeling, quantity or abstraction: never possessions, never a bare preference."""

PLACEHOLDERS: frozenset[str] = closed(
    """
    it this that these those them they he she him her you your yours me myself us we
    something someone somebody anything anyone anybody everything everyone everybody nothing
    nobody stuff things thing one ones lots lot plenty ton tons loads heaps few bunch everywhere
    somewhere
    anywhere here there more most much other others same
    """
)
"""Words that name nothing on their own: an end that starts or ends with one forms nothing."""

EVENT_HEADS: frozenset[str] = closed(
    """
    race marathon half-marathon 5k 10k triathlon run walk ride hike trek climb tournament
    competition contest championship match game games meet league cup
    parade festival fair market carnival concert gig show recital performance play musical opera
    ballet exhibition exhibit expo convention conference summit seminar webinar lecture talk
    speech presentation keynote panel workshop class classes course lesson lessons session
    bootcamp camp retreat rally protest march vigil fundraiser gala auction drive cleanup
    wedding funeral reunion ceremony graduation party celebration barbecue bbq picnic potluck
    meetup slam reading signing screening premiere tour trip vacation holiday cruise
    event events service mass hackathon jam audition interview interviews open-mic test tests
    exam exams comp mtg fest
    group program programme meeting
    """
)
"""Nouns that name an event a person takes part in ("a charity race", "a poetry reading")."""

ACTIVITY_HEADS: frozenset[str] = closed(
    """
    yoga pilates judo karate taekwondo jiu-jitsu aikido kickboxing boxing fencing archery
    crossfit ballet tennis squash badminton golf chess soccer football basketball volleyball
    rugby hockey baseball softball cricket lacrosse pottery ceramics photography calligraphy
    origami tai chi parkour therapy classes lessons class course karaoke poker bridge sudoku meditation
    zumba salsa tango improv theatre theater choir band piano guitar violin drums cello
    banjo ukulele flute saxophone trumpet harp clarinet mandolin accordion harmonica
    """
)
"""Activities that do not end in -ing; a gerund ("rowing", "knitting") is an activity too."""

NOT_ACTIVITIES: frozenset[str] = closed(
    """
    well great good fine okay ok better worse alright amazing awesome fantastic pretty
    stuff things something anything nothing everything it this that them my our your some
    a lot lots research work homework nothing well-ish much more less the
    """
)
"""Words after "doing", "started" or "teach" that are not an activity ("doing great")."""

PET_HEADS: frozenset[str] = closed(
    """
    dog dogs puppy puppies cat cats kitten kittens horse pony rabbit rabbits bunny hamster
    guinea-pig parrot bird fish goldfish turtle tortoise snake lizard gecko chicken chickens
    goat ferret pup
    """
)
"""What "I adopted a …" takes home."""
PET_HEADS = PET_HEADS | {"guinea pig"}

VAGUE_EVENTS: frozenset[str] = closed(
    "event events tour trip show game games class session party group service meet program"
    " programme meeting"
)
"""Event nouns too vague alone ("went to an event"): they form only with a qualifier."""

HOBBY_GERUNDS: frozenset[str] = closed(
    """
    painting drawing sketching writing journaling running jogging swimming cycling biking hiking
    climbing bouldering rowing kayaking surfing skating skiing snowboarding fishing camping
    knitting crocheting sewing quilting baking cooking gardening volunteering dancing singing
    meditating woodworking sculpting photographing gaming birdwatching skateboarding
    blogging vlogging podcasting
    """
)
"""Hobbies told as "I've been …ing": a closed list, because "I've been thinking" is none."""

SPORTS: frozenset[str] = closed(
    """
    tennis squash badminton golf chess soccer football basketball volleyball rugby hockey
    baseball softball cricket lacrosse poker bridge pickleball handball frisbee darts pool
    """
)
"""What "I play …" names as an activity (instruments are left out: "play the piano" is
ambiguous between a skill and a pastime)."""

CREATIONS: frozenset[str] = closed(
    """
    screenplay screenplays script scripts novel novels book books story stories poem poems song
    articles essays
    songs album albums painting paintings mural portrait sculpture quilt scarf sweater blanket
    thesis dissertation paper article essay film movie documentary short app website blog
    podcast game comic zine cookbook memoir play musical
    """
)
"""Works a person makes: "I finished my first novel" is (I, created, first novel)."""

TAUGHT_SUBJECTS: frozenset[str] = closed(
    """
    math maths mathematics history science biology chemistry physics geography art music
    drama literature writing reading dance dancing swimming cooking baking painting drawing
    sewing knitting coding programming economics philosophy psychology sociology law
    """
)
"""What "I teach …" names as a subject, besides activities, sports and languages."""
